"""Acceptance across a production fleet, read from Prometheus.

client.py   the HTTP API (auth, timeouts, one-line errors), every request counted
metrics.py  the spec-decode series each engine release exposes (with their source lines)
queries.py  PromQL: every engine in a fixed handful of queries, aggregated by label
fleet.py    the `fleet` service: read, diagnose each engine, flag outliers against peers
gather.py   `diagnose --prometheus`: an engine's history as ACCEPTANCE / METRICS evidence
rules.py    alerting rules and a Grafana dashboard (`monitor rules|grafana`)
"""
