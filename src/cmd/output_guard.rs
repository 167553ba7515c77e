//! No command writes its output over what it reads or writes: a file it
//! was given, or anything inside a data directory or partition folder it
//! was given (`klog report DIR -o DIR/orders-0/00000000000000000000.log`
//! would replace a segment with HTML). Checked before anything is read,
//! for `-o FILE` and for stdout when the shell sent it to a file (`>>`
//! appends to it, which would add text to a segment).

use std::path::{Path, PathBuf};

use kaen_log::log::lock::LOCK_FILE;
use kaen_log::log::meta::META_PROPERTIES;

/// Refuse `output` (the `-o` file, or `None` for stdout) when it is one of
/// `inputs` or lies inside one (see the module doc).
pub fn check(output: Option<&Path>, inputs: &[&Path]) -> anyhow::Result<()> {
    let (target, what) = match output {
        Some(path) => (resolve(path), format!("the output file {}", path.display())),
        None => match stdout_file() {
            Some(path) => (Some(path), "stdout".to_string()),
            None => return Ok(()),
        },
    };
    let Some(target) = target else {
        return Ok(());
    };
    for input in inputs {
        if let Some(region) = protected(input).into_iter().find(|r| target.starts_with(r)) {
            let place = if region == target { "" } else { "inside " };
            anyhow::bail!(
                "{what} is {place}{}, which this command reads or writes: nothing was written \
                 (write the output outside the data directories given)",
                region.display()
            );
        }
    }
    Ok(())
}

/// The regions an input protects: the input itself (canonical), and for a
/// file, the partition folder and data directory it sits in.
fn protected(input: &Path) -> Vec<PathBuf> {
    let Ok(canonical) = std::fs::canonicalize(input) else {
        return Vec::new();
    };
    let mut regions = vec![canonical.clone()];
    if canonical.is_file() {
        for dir in canonical.ancestors().skip(1).take(2) {
            if is_log_folder(dir) {
                regions.push(dir.to_path_buf());
            }
        }
    }
    regions
}

/// A partition folder (`<topic>-<partition>`, holding segments) or a log
/// directory (a `.lock` or `meta.properties`).
fn is_log_folder(dir: &Path) -> bool {
    let named = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(kaen_log::log::parse_partition_dir)
        .is_some();
    let holds_segments = || {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.filter_map(|e| e.ok()).any(|e| {
                e.file_name()
                    .to_str()
                    .and_then(kaen_log::log::parse_segment_name)
                    .is_some()
            })
        })
    };
    (named && holds_segments())
        || dir.join(LOCK_FILE).exists()
        || dir.join(META_PROPERTIES).exists()
}

/// `path` as it will be written: canonical when it exists (a symlink's
/// target), else its canonical parent joined with its name.
fn resolve(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(name))
}

/// The regular file stdout writes to, when it is one (Linux names it in
/// `/proc/self/fd/1`).
fn stdout_file() -> Option<PathBuf> {
    let path = std::fs::read_link("/proc/self/fd/1").ok()?;
    let meta = std::fs::metadata(&path).ok()?;
    meta.is_file().then(|| std::fs::canonicalize(&path).ok())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_inside_what_is_read_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let part = data.join("orders-0");
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(data.join(LOCK_FILE), b"").unwrap();
        let seg = part.join("00000000000000000000.log");
        std::fs::write(&seg, b"x").unwrap();
        let elsewhere = tmp.path().join("page.html");
        // A data directory given: nothing inside it, existing or not.
        assert!(check(Some(&seg), &[&data]).is_err());
        assert!(check(Some(&part.join("new.html")), &[&data]).is_err());
        assert!(check(Some(&elsewhere), &[&data]).is_ok());
        // A file given: itself, its partition folder and its data directory.
        assert!(check(Some(&seg), &[&seg]).is_err());
        assert!(check(Some(&data.join("x.html")), &[&seg]).is_err());
        assert!(check(Some(&elsewhere), &[&seg]).is_ok());
        // A symlink to an input is the input.
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&seg, &link).unwrap();
        assert!(check(Some(&link), &[&data]).is_err());
        // A plain file given (a summary) protects itself only, in a folder
        // named like a partition too.
        let folder = tmp.path().join("klog-1");
        std::fs::create_dir(&folder).unwrap();
        let summary = folder.join("s.json");
        std::fs::write(&summary, b"{}").unwrap();
        assert!(check(Some(&summary), &[&summary]).is_err());
        assert!(check(Some(&elsewhere), &[&summary]).is_ok());
        assert!(check(Some(&folder.join("page.html")), &[&summary]).is_ok());
    }
}
