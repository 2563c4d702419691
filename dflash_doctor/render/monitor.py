"""Alerting rules as Prometheus YAML and the dashboard as Grafana JSON (documents in, text out)."""

from __future__ import annotations

import yaml

from .json_report import dumps_safe

FORMATS = ("terminal",)  # each document has its one form: rules are YAML, a dashboard is JSON


def render(doc, fmt, style) -> str:
    if type(doc).__name__ == "AlertRules":
        return render_rules_yaml(doc.doc)
    return render_dashboard_json(doc.doc)


def render_rules_yaml(doc: dict) -> str:
    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value: str):
        style = "|" if "\n" in value else None  # PromQL over several lines stays readable
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    head = (
        "# Prometheus alerting rules from dflash-doctor (`dflash-doctor monitor rules`).\n"
        "# Load: add this file under rule_files: in prometheus.yml, check it with `promtool check rules FILE`,\n"
        "# then reload Prometheus (SIGHUP or POST /-/reload with --web.enable-lifecycle).\n"
    )
    return head + yaml.dump(
        doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096
    )


def render_dashboard_json(doc: dict) -> str:
    return dumps_safe(doc)
