//! Clients of the worker: a minimal blocking HTTP/1.1 client over `std::net::TcpStream` (no
//! runtime, no TLS: the worker is on loopback) and worker discovery from `<data>`.

pub mod http;
pub mod worker;
