//! `memd mcp` (in progress).
