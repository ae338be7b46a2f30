//! Test-only package: see tests/tests/.
