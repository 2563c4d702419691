"""Built-in checks, one per module. Installed as ``dflash_doctor.checks``; found by package scan."""
