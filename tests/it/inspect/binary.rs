//! `--mode rpc` `get_requests` / `get_request` and `claw-tui inspect` through the real
//! binary.
