//! The weights of a BERT encoder read from a `model.safetensors` file (f32 tensors, the names of
//! Hugging Face's `BertModel`, with or without a `bert.` prefix) and the sizes of its `config.json`.
//!
//! The safetensors format: an 8-byte little-endian header length, a JSON header naming each
//! tensor's dtype, shape and byte range, then the data. Tensors are read one at a time from the
//! file, so loading holds the model once in memory, not twice.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;

use crate::BertError;
use crate::dense::{Kernel, Linear};

/// The sizes the forward pass needs (`config.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn bad(msg: impl Into<String>) -> BertError {
    BertError::Format(msg.into())
}

fn default_eps() -> f64 {
    1e-12
}
fn default_act() -> String {
    "gelu".into()
}

/// A layer normalisation's scale and shift.
#[derive(Debug)]
pub struct Norm {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
}

/// One transformer layer.
#[derive(Debug)]
pub struct Layer {
    /// Query, key and value stacked: `3 × hidden` outputs.
    pub qkv: Linear,
    pub attn_out: Linear,
    pub attn_norm: Norm,
    pub up: Linear,
    pub down: Linear,
    pub out_norm: Norm,
}

/// Every weight of the encoder.
#[derive(Debug)]
pub struct BertWeights {
    pub config: BertConfig,
    /// `[vocab][hidden]`, f16 (a text reads a few rows; half the memory of f32).
    pub words: Vec<half::f16>,
    /// `[max_position][hidden]`.
    pub positions: Vec<f32>,
    /// The token type 0 row (memd never sends a second segment).
    pub segment: Vec<f32>,
    pub embed_norm: Norm,
    pub layers: Vec<Layer>,
}

#[derive(Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// The open file and its header.
struct Tensors {
    file: File,
    data_start: u64,
    entries: HashMap<String, Entry>,
    prefix: &'static str,
}

impl Tensors {
    fn open(path: &Path) -> Result<Self, BertError> {
        let mut file = File::open(path).map_err(|e| BertError::Io("model.safetensors", e))?;
        let mut len = [0u8; 8];
        file.read_exact(&mut len)
            .map_err(|e| BertError::Io("model.safetensors header", e))?;
        let len = u64::from_le_bytes(len);
        let size = file.metadata().map_err(|e| BertError::Io("model.safetensors", e))?.len();
        if len > size.saturating_sub(8) || len > 100 << 20 {
            return Err(bad("not a safetensors file (header length)"));
        }
        let mut header = vec![0u8; len as usize];
        file.read_exact(&mut header)
            .map_err(|e| BertError::Io("model.safetensors header", e))?;
        let mut raw: HashMap<String, serde_json::Value> =
            serde_json::from_slice(&header).map_err(|e| bad(format!("not a safetensors header: {e}")))?;
        raw.remove("__metadata__");
        let entries: HashMap<String, Entry> = raw
            .into_iter()
            .filter_map(|(k, v)| serde_json::from_value(v).ok().map(|e| (k, e)))
            .collect();
        let prefix = if entries.contains_key("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        Ok(Self {
            file,
            data_start: 8 + len,
            entries,
            prefix,
        })
    }

    /// The f32 tensor `name` with the given shape.
    fn get(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, BertError> {
        let full = format!("{}{name}", self.prefix);
        let e = self.entries.get(&full).ok_or_else(|| bad(format!("no tensor {full}")))?;
        if e.dtype != "F32" || e.shape != shape {
            return Err(bad(format!("{full}: {} {:?}, expected F32 {shape:?}", e.dtype, e.shape)));
        }
        let count: usize = shape.iter().product();
        let [start, end] = e.data_offsets;
        if end.checked_sub(start) != Some(count as u64 * 4) {
            return Err(bad(format!("{full}: byte range does not match its shape")));
        }
        let mut bytes = vec![0u8; count * 4];
        self.file
            .seek(SeekFrom::Start(self.data_start + start))
            .map_err(|e| BertError::Io("model.safetensors", e))?;
        self.file
            .read_exact(&mut bytes)
            .map_err(|e| BertError::Io("model.safetensors data", e))?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// The dense layers `names` (each `out × inp`) as one layer, their outputs side by side.
    fn linear(&mut self, names: &[&str], out: usize, inp: usize, kernel: Kernel) -> Result<Linear, BertError> {
        let (mut w, mut b) = (Vec::with_capacity(names.len() * out * inp), Vec::with_capacity(names.len() * out));
        for name in names {
            w.extend(self.get(&format!("{name}.weight"), &[out, inp])?);
            b.extend(self.get(&format!("{name}.bias"), &[out])?);
        }
        Linear::with_kernel(&w, b, inp, kernel).ok_or_else(|| bad(format!("{}: bad sizes", names[0])))
    }

    fn norm(&mut self, name: &str, hidden: usize) -> Result<Norm, BertError> {
        Ok(Norm {
            gamma: self.get(&format!("{name}.weight"), &[hidden])?,
            beta: self.get(&format!("{name}.bias"), &[hidden])?,
        })
    }
}

impl BertWeights {
    /// Reads `config.json` and `model.safetensors` from `dir`, its dense layers for `kernel`
    /// ([`Kernel::best`] is this CPU's fastest). Blocking.
    pub fn load_with(dir: &Path, kernel: Kernel) -> Result<Self, BertError> {
        let text = std::fs::read_to_string(dir.join("config.json")).map_err(|e| BertError::Io("config.json", e))?;
        let config: BertConfig = serde_json::from_str(&text).map_err(|e| bad(format!("config.json: {e}")))?;
        let h = config.hidden_size;
        if h == 0 || config.num_attention_heads == 0 || !h.is_multiple_of(config.num_attention_heads) {
            return Err(bad("config.json: hidden_size is not a multiple of num_attention_heads"));
        }
        if config.hidden_act != "gelu" {
            return Err(bad(format!("config.json: hidden_act {} is not supported", config.hidden_act)));
        }
        let mut t = Tensors::open(&dir.join("model.safetensors"))?;
        let vocab = t
            .entries
            .get(&format!("{}embeddings.word_embeddings.weight", t.prefix))
            .and_then(|e| e.shape.first().copied())
            .ok_or_else(|| bad("no word embeddings"))?;
        let words = t
            .get("embeddings.word_embeddings.weight", &[vocab, h])?
            .into_iter()
            .map(half::f16::from_f32)
            .collect();
        let positions = t.get("embeddings.position_embeddings.weight", &[config.max_position_embeddings, h])?;
        let types = t.entries.get(&format!("{}embeddings.token_type_embeddings.weight", t.prefix));
        let type_rows = types.and_then(|e| e.shape.first().copied()).unwrap_or(0);
        let mut segment = t.get("embeddings.token_type_embeddings.weight", &[type_rows, h])?;
        segment.truncate(h);
        if segment.len() != h {
            return Err(bad("no token type embeddings"));
        }
        let embed_norm = t.norm("embeddings.LayerNorm", h)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let qkv = t.linear(
                &[
                    &format!("{p}.attention.self.query"),
                    &format!("{p}.attention.self.key"),
                    &format!("{p}.attention.self.value"),
                ],
                h,
                h,
                kernel,
            )?;
            layers.push(Layer {
                qkv,
                attn_out: t.linear(&[&format!("{p}.attention.output.dense")], h, h, kernel)?,
                attn_norm: t.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
                up: t.linear(&[&format!("{p}.intermediate.dense")], config.intermediate_size, h, kernel)?,
                down: t.linear(&[&format!("{p}.output.dense")], h, config.intermediate_size, kernel)?,
                out_norm: t.norm(&format!("{p}.output.LayerNorm"), h)?,
            });
        }
        Ok(Self {
            config,
            words,
            positions,
            segment,
            embed_norm,
            layers,
        })
    }

    /// Vocabulary size (rows of the word embeddings).
    pub fn vocab(&self) -> usize {
        self.words.len() / self.config.hidden_size
    }

    /// The kernel its dense layers run on.
    pub fn kernel(&self) -> Kernel {
        self.layers.first().map_or(Kernel::best(), |l| l.qkv.kernel())
    }
}
