"""lit configuration: every .mlir file under test/ is a test.

RUN lines use the installed tools (`gc-opt`, ...) and the `filecheck` package
(also reachable as `FileCheck`). `%plugins` is the folder of test plugins.
"""

import os
import shutil
import sys

import lit.formats

config.name = "graphcompiler"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["plugins", "python", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

filecheck = shutil.which("filecheck")
if filecheck is None:
    lit_config.fatal("the 'filecheck' command is missing: pip install filecheck")
config.substitutions.append(("FileCheck", filecheck))
config.substitutions.append(("%plugins", os.path.join(config.test_source_root, "plugins")))
config.substitutions.append(("%python", sys.executable))

# Tools run with the environment lit was started with (PATH finds gc-opt).
for variable in ("PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV"):
    if variable in os.environ:
        config.environment[variable] = os.environ[variable]
