"""The version from every place an install keeps it, with the one used named."""

from dflash_doctor.engines import FetchedTree
from dflash_doctor.engines.version import read_version


def tree(files):
    return FetchedTree(files.keys(), files)


def test_dist_info_wins_and_every_reading_is_kept():
    v = read_version(
        "vllm",
        tree(
            {
                "vllm-0.26.0.dist-info/METADATA": "Name: vllm\nVersion: 0.26.0\n",
                "vllm/_version.py": "__version__ = version = '0.26.0'\n",
            }
        ),
    )
    assert (v.value, v.source, v.conflicts) == ("0.26.0", "vllm-0.26.0.dist-info/METADATA", False)
    assert len(v.readings) == 2


def test_a_checkout_without_dist_info_reads_version_py():
    v = read_version(
        "vllm",
        tree(
            {
                "vllm/_version.py": "__version__ = version = '0.20.1'\n",
                "vllm/version.py": "from ._version import __version__\n",
            }
        ),
    )
    assert (v.value, v.source) == ("0.20.1", "vllm/_version.py")


def test_a_stale_dist_info_beside_a_newer_tree_is_a_conflict():
    v = read_version(
        "sglang",
        tree(
            {
                "sglang-0.5.21.dist-info/METADATA": "Name: sglang\nVersion: 0.5.21\n",
                "sglang/version.py": '__version__ = "0.5.22"\n',
            }
        ),
    )
    assert v.value == "0.5.21" and v.conflicts


def test_the_log_line_is_a_last_resort_and_never_code_is_run():
    v = read_version(
        "vllm", tree({"vllm/_version.py": "import os\n__version__ = os.system('x')\n"}), log_version="0.25.0"
    )
    assert (v.value, v.source) == ("0.25.0", "log startup line")
    assert read_version("vllm", tree({})).value is None
