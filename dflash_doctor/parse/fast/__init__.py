"""The fast route of a log scan: a large plain file read by grep pre-filtering and byte-range worker
processes, with vLLM's metrics lines read in bulk into packed columns. Chosen by `ScanPlan` (parse/logscan.py);
it gives the rows the plain streamed route gives (tests/parse compare the two field by field)."""
