//! Clients of the worker: a minimal blocking HTTP/1.1 client over `std::net::TcpStream` (no
//! runtime, no TLS: the worker is on loopback), worker discovery from `<data>`, and starting the
//! worker (spawn lock + detached `memd serve`) for the hook and `memd mcp`.

pub mod http;
pub mod spawn;
pub mod worker;
