"""When `pip install .` configures its build folder (setup.py's configure_arguments): whenever the folder has no
generated build files, also after a configure that failed and left only CMakeCache.txt behind."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("termalign_setup", ROOT / "setup.py")
setup_py = importlib.util.module_from_spec(spec)
spec.loader.exec_module(setup_py)  # not as __main__: setup() does not run
configure_arguments = setup_py.configure_arguments

PYTHON = "/usr/bin/python3"
DEFAULTS = ["-DCMAKE_BUILD_TYPE=Release", "-DTERMALIGN_BUILD_TESTS=OFF", "-DTERMALIGN_PYTHON=ON",
            f"-DPython_EXECUTABLE={PYTHON}"]


def test_a_new_folder_is_configured_with_the_defaults(tmp_path):
    assert configure_arguments(tmp_path / "new", ["-DTERMALIGN_NATIVE=OFF"], PYTHON) == \
        DEFAULTS + ["-DTERMALIGN_NATIVE=OFF"]


def test_a_failed_configure_is_configured_again(tmp_path):
    # What a configure that stopped (e.g. pybind11 missing) leaves: the cache, no Makefile or build.ninja.
    (tmp_path / "CMakeCache.txt").write_text("TERMALIGN_PYTHON:BOOL=ON\nCMAKE_BUILD_TYPE:STRING=Release\n")
    (tmp_path / "CMakeFiles").mkdir()
    assert configure_arguments(tmp_path, [], PYTHON) == DEFAULTS


def test_a_configured_folder_keeps_its_options(tmp_path):
    for generated in ("Makefile", "build.ninja"):
        folder = tmp_path / generated
        folder.mkdir()
        (folder / generated).write_text("")
        (folder / "CMakeCache.txt").write_text("TERMALIGN_PYTHON:BOOL=ON\n")
        assert configure_arguments(folder, [], PYTHON) == []
        assert configure_arguments(folder, ["-DTERMALIGN_NATIVE=OFF"], PYTHON) == ["-DTERMALIGN_NATIVE=OFF"]
        (folder / "CMakeCache.txt").write_text("TERMALIGN_PYTHON:BOOL=OFF\n")  # such as build/ without the module
        assert configure_arguments(folder, [], PYTHON) == ["-DTERMALIGN_PYTHON=ON"]
