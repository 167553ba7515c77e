"""Run the calling script again under a venv's python that has a pinned
package, installing it there the first time (the checks in this folder
import duckdb or pyspark; pip installs them from PyPI)."""

import importlib
import os
import subprocess
import sys


def ensure(module, package, version, venv_dir):
    """Return when `module` of `package`==`version` is importable here;
    otherwise make `venv_dir` (python3 -m venv), pip-install the pinned
    package into it once, and exec this script with its python."""
    try:
        if importlib.import_module(module).__version__ == version:
            return
    except ImportError:
        pass
    flag = f"KLOG_VENV_{module.upper()}_DONE"
    if os.environ.get(flag):
        sys.exit(f"{package} {version} is not importable even in {venv_dir}")
    py = os.path.join(venv_dir, "bin", "python")
    probe = f"import {module}, sys; sys.exit({module}.__version__ != '{version}')"
    if not os.path.exists(py) or subprocess.run([py, "-c", probe]).returncode != 0:
        print(f"installing {package}=={version} into {venv_dir}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv_dir], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", f"{package}=={version}"], check=True)
    os.environ[flag] = "1"
    os.execv(py, [py] + sys.argv)
