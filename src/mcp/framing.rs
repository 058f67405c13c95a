//! The stdio framing in front of rmcp: every line the client sends is checked before rmcp reads
//! it, so that a line that is not JSON (malformed, or nested deeper than the parser allows) gets a
//! JSON-RPC `-32700` answer with a null id, and JSON that is not a JSON-RPC message gets `-32600`
//! — rmcp alone drops both and the client waits for its timeout. One writer task puts rmcp's
//! lines and these answers on stdout, whole lines only.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

const PIPE: usize = 1 << 16;

/// What the client sent, as the server must treat it.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A JSON-RPC message for rmcp.
    Message,
    /// Blank: ignored.
    Blank,
    /// Not for rmcp: this error answer goes back to the client.
    Refused(Value),
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Classifies one line from the client.
pub fn classify(line: &str) -> Line {
    if line.trim().is_empty() {
        return Line::Blank;
    }
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Line::Refused(error(Value::Null, -32700, format!("Parse error: {e}"))),
    };
    let is_message =
        v.get("jsonrpc").and_then(Value::as_str) == Some("2.0") && ["method", "result", "error"].iter().any(|k| v.get(*k).is_some());
    if is_message {
        return Line::Message;
    }
    let id = v
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    Line::Refused(error(id, -32600, "Invalid Request: not a JSON-RPC 2.0 message".into()))
}

/// Wraps `input`/`output`: answers what rmcp must not see and hands rmcp the rest. Returns the
/// pair rmcp serves on.
pub fn wrap<R, W>(input: R, output: W) -> (DuplexStream, DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, mut to_rmcp) = tokio::io::duplex(PIPE);
    let (from_rmcp, rmcp_out) = tokio::io::duplex(PIPE);
    let (refusals, mut refused) = mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        let mut lines = BufReader::new(input).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match classify(&line) {
                Line::Message => {
                    if to_rmcp.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                        break;
                    }
                }
                Line::Blank => {}
                Line::Refused(answer) => {
                    tracing::warn!(answer = %answer["error"]["message"], "mcp: refused a line from the client");
                    let _ = refusals.send(answer);
                }
            }
        }
        // End of input: rmcp sees its input close and stops.
    });
    tokio::spawn(async move {
        let mut out = output;
        let mut rmcp_lines = BufReader::new(rmcp_out).lines();
        loop {
            let line = tokio::select! {
                line = rmcp_lines.next_line() => match line {
                    Ok(Some(l)) => l,
                    _ => break,
                },
                Some(answer) = refused.recv() => answer.to_string(),
            };
            if out.write_all(format!("{line}\n").as_bytes()).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
    });
    (rmcp_in, from_rmcp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified_as_json_rpc_requires() {
        assert_eq!(classify(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#), Line::Message);
        assert_eq!(classify("  "), Line::Blank);
        let Line::Refused(a) = classify("{not json") else { panic!() };
        assert_eq!((a["error"]["code"].as_i64(), a["id"].is_null()), (Some(-32700), true));
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let Line::Refused(a) = classify(&deep) else { panic!() };
        assert_eq!(a["error"]["code"], -32700, "too deep to parse is a parse error");
        let Line::Refused(a) = classify(r#"{"id":7,"method":"x"}"#) else {
            panic!()
        };
        assert_eq!((a["error"]["code"].as_i64(), a["id"].as_i64()), (Some(-32600), Some(7)));
        let Line::Refused(a) = classify("[1,2]") else { panic!() };
        assert_eq!(a["error"]["code"], -32600);
    }
}
