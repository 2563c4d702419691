"""Guards over the package source and command line: nothing that executes what it reads, no
password option, SSH host keys checked by default. These read the code (AST), so a new module that
calls eval() or pickle.load() fails here the day it lands."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT
from tests.hardening import tally

SOURCES = sorted(p for d in ("dflash_doctor", "checks") for p in (ROOT / d).rglob("*.py"))

UNPICKLERS = {"pickle", "cPickle", "dill", "joblib", "marshal", "shelve", "cloudpickle", "_pickle"}


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def _kw(call: ast.Call, name: str):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def dangerous_calls(tree: ast.AST) -> list[str]:  # noqa: C901 - one branch per guarded pattern
    bad: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = _name(node.func)
            base, _, attr = fn.rpartition(".")
            if fn in ("eval", "exec", "compile", "__import__", "builtins.eval", "builtins.exec"):
                bad.append(f"{fn}()")
            if base in UNPICKLERS and attr in ("load", "loads", "Unpickler", "open"):
                bad.append(f"{fn}()")
            if fn in ("torch.load",) or attr == "load" and base.endswith("torch"):
                wo = _kw(node, "weights_only")
                if not _is_true(wo):
                    bad.append("torch.load() without weights_only=True")
            if fn in ("yaml.load", "yaml.unsafe_load", "yaml.full_load") and _kw(node, "Loader") is None:
                bad.append(f"{fn}() without a safe Loader")
            if _is_true(_kw(node, "trust_remote_code")):
                bad.append("trust_remote_code=True")
            if _is_true(_kw(node, "shell")):
                bad.append(f"{fn}(shell=True)")
            if fn in (
                "os.system",
                "os.popen",
                "subprocess.getoutput",
                "subprocess.getstatusoutput",
                "os.execv",
                "os.execvp",
                "os.spawnl",
            ):
                bad.append(f"{fn}()")
            if (
                fn.endswith("set_missing_host_key_policy")
                and node.args
                and "AutoAdd" in _name(node.args[0]) + ast.dump(node.args[0])
            ):
                bad.append("paramiko AutoAddPolicy")
        if isinstance(node, ast.keyword) and node.arg == "trust_remote_code" and _is_true(node.value):
            bad.append("trust_remote_code=True")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for m in mods:
                if m.split(".")[0] in UNPICKLERS - {"marshal"}:
                    bad.append(f"import {m}")
    return bad


# Reviewed exceptions, each with the reason it is safe. Keep this list short.
ALLOWED = {
    (
        "dflash_doctor/parse/fast/workers.py",
        "marshal.loads()",
    ): "tuples of str/float built by the scanner's own forked worker, read back over a pipe; the log's bytes "
    "are never unmarshalled, and marshal data does not run code",
    (
        "dflash_doctor/cli/probe_cmd.py",
        "__import__()",
    ): "imports the fixed names 'torch' and 'transformers' to say which extra is missing",
}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_executes_or_unpickles_what_it_reads(path):
    tally.hostile_input("source guard: modules scanned")
    rel = str(path.relative_to(ROOT))
    bad = [b for b in dangerous_calls(ast.parse(path.read_text(), str(path))) if (rel, b) not in ALLOWED]
    assert not bad, f"{rel}: {bad}"


def test_the_guard_itself_catches_each_pattern():
    code = (
        "import pickle\npickle.load(f)\neval(x)\nexec(y)\ntorch.load(p)\n"
        "AutoModel.from_pretrained(r, trust_remote_code=True)\nsubprocess.run(c, shell=True)\nos.system(c)\n"
        "client.set_missing_host_key_policy(paramiko.AutoAddPolicy())\nyaml.load(s)\n"
    )
    bad = dangerous_calls(ast.parse(code))
    for needle in (
        "import pickle",
        "pickle.load()",
        "eval()",
        "exec()",
        "torch.load() without weights_only=True",
        "trust_remote_code=True",
        "subprocess.run(shell=True)",
        "os.system()",
        "paramiko AutoAddPolicy",
        "yaml.load() without a safe Loader",
    ):
        assert needle in bad, (needle, bad)
    assert not dangerous_calls(ast.parse("ast.literal_eval(s)\ntorch.load(p, weights_only=True)\nre.compile(x)\n"))


def test_no_command_accepts_a_password():
    import typer

    from dflash_doctor.cli.app import app

    root = typer.main.get_command(app)
    seen = []

    def walk(cmd, path):
        for p in cmd.params:
            for opt in list(getattr(p, "opts", [])) + list(getattr(p, "secondary_opts", [])) + [p.name or ""]:
                seen.append((path, opt))
        if hasattr(cmd, "list_commands"):  # a group (typer vendors its own click; the root loads its commands lazily)
            for name in cmd.list_commands(None):
                walk(cmd.get_command(None, name), f"{path} {name}")

    walk(root, "dflash-doctor")
    assert len(seen) > 5
    tally.hostile_input("cli options checked for passwords", len(seen))
    assert not [s for s in seen if any(w in s[1].lower() for w in ("password", "passwd", "passphrase", "--pass"))]


def test_ssh_connects_with_keys_only_and_rejects_unknown_host_keys_by_default(monkeypatch, tmp_path):
    import paramiko

    from dflash_doctor.hosts.interface import HostError
    from dflash_doctor.hosts.ssh import SSHHost, _Policy

    seen = {}

    def fake_connect(self, hostname, **kw):
        seen.update(kw)
        seen["policy"] = self._policy
        raise paramiko.AuthenticationException("no")

    monkeypatch.setattr(paramiko.SSHClient, "connect", fake_connect)
    with pytest.raises(HostError):
        SSHHost("ssh://u@203.0.113.9:22", known_hosts=str(tmp_path / "kh"), ssh_config=str(tmp_path / "none"))
    assert seen["password"] is None and "passphrase" not in seen
    assert isinstance(seen["policy"], _Policy) and seen["policy"].accept_new is False
    # the policy refuses an unknown key unless the user opted in
    key = paramiko.Ed25519Key.generate() if hasattr(paramiko.Ed25519Key, "generate") else None
    if key is None:
        from paramiko import RSAKey

        key = RSAKey.generate(1024)
    with pytest.raises(HostError, match="unknown host key"):
        seen["policy"].missing_host_key(None, "203.0.113.9", key)
