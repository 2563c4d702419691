"""Host access: local, SSH, bundle. run / read / list with timeouts, nothing else."""
