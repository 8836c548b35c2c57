//! Number formats: of the weights, of the activations (what the matrix units compute in),
//! and of the KV cache — three separate choices in vLLM (`--quantization`, `--dtype`,
//! `--kv-cache-dtype`).

use serde::{Deserialize, Serialize};

/// A number format, or `auto`: what the checkpoint and the other choices imply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// Derived: see [`Dtypes::resolve`].
    #[default]
    Auto,
    /// 32-bit float.
    Float32,
    /// bfloat16.
    Bfloat16,
    /// IEEE half.
    Float16,
    /// 8-bit float (e4m3).
    Fp8,
    /// 8-bit integer (weights only).
    Int8,
    /// 4-bit integer (weights only, e.g. AWQ/GPTQ).
    Int4,
    /// NVIDIA's 4-bit float: e2m1 with an FP8 scale per 16 elements (ModelOpt's NVFP4). As
    /// activations, W4A4 GEMMs on Blackwell's FP4 matrix units.
    Nvfp4,
    /// The OCP microscaling 4-bit float: e2m1 with a power-of-two scale per 32 elements
    /// (gpt-oss's MXFP4). As activations, GEMMs on the FP4 matrix units.
    Mxfp4,
}

impl Dtype {
    /// Bytes per element (`auto` counts as 2).
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Float32 => 4.0,
            Dtype::Auto | Dtype::Bfloat16 | Dtype::Float16 => 2.0,
            Dtype::Fp8 | Dtype::Int8 => 1.0,
            Dtype::Int4 => 0.5,
            // Four bits and a one-byte scale per block of 16 or 32.
            Dtype::Nvfp4 => 0.5 + 1.0 / 16.0,
            Dtype::Mxfp4 => 0.5 + 1.0 / 32.0,
        }
    }

    /// True for the 4-bit floats, whose GEMMs need FP4 matrix units.
    pub fn is_fp4(self) -> bool {
        matches!(self, Dtype::Nvfp4 | Dtype::Mxfp4)
    }

    /// The format a checkpoint stored at `bytes` per weight has (1 byte: FP8).
    pub fn of_checkpoint(bytes: u32) -> Self {
        match bytes {
            4 => Dtype::Float32,
            1 => Dtype::Fp8,
            _ => Dtype::Bfloat16,
        }
    }
}

/// The three formats of a deployment, resolved (never `auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Dtypes {
    /// Linear-layer weights (embeddings and the LM head stay 16-bit, as vLLM keeps them).
    pub weight: Dtype,
    /// Activations: FP8 means the GEMMs run on the FP8 matrix units (W8A8).
    pub activation: Dtype,
    /// KV cache entries.
    pub kv_cache: Dtype,
}

impl Dtypes {
    /// Resolves the configured formats over a checkpoint stored at `checkpoint_bytes` per
    /// weight, as vLLM does: FP8 weights compute in FP8 (dynamic per-token activation
    /// scales); NVFP4 weights compute in NVFP4 (ModelOpt's W4A4) and MXFP4 weights in 16-bit
    /// (vLLM's default for gpt-oss); integer weights dequantise to 16-bit; the KV cache
    /// follows the activations unless set (16-bit under FP8 or FP4 activations).
    pub fn resolve(
        weight: Dtype,
        activation: Dtype,
        kv_cache: Dtype,
        checkpoint_bytes: u32,
    ) -> Self {
        let weight = match weight {
            Dtype::Auto => Dtype::of_checkpoint(checkpoint_bytes),
            w => w,
        };
        let activation = match (activation, weight) {
            (Dtype::Auto, Dtype::Fp8) => Dtype::Fp8,
            (Dtype::Auto, Dtype::Nvfp4) => Dtype::Nvfp4,
            (Dtype::Auto, Dtype::Float32) => Dtype::Float32,
            (Dtype::Auto, Dtype::Float16) => Dtype::Float16,
            (Dtype::Auto, _) => Dtype::Bfloat16,
            (a, _) => a,
        };
        let kv_cache = match (kv_cache, activation) {
            (Dtype::Auto, Dtype::Float32) => Dtype::Float32,
            (Dtype::Auto, Dtype::Float16) => Dtype::Float16,
            (Dtype::Auto, _) => Dtype::Bfloat16,
            (k, _) => k,
        };
        Self {
            weight,
            activation,
            kv_cache,
        }
    }

    /// Bytes of one element of the 16- or 32-bit tensors between layers (FP8 activations are
    /// quantised inside the GEMMs; what moves between kernels stays 16-bit).
    pub fn hidden_bytes(&self) -> f64 {
        if self.activation == Dtype::Float32 {
            4.0
        } else {
            2.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_the_checkpoint_like_vllm() {
        let bf16 = Dtypes::resolve(Dtype::Auto, Dtype::Auto, Dtype::Auto, 2);
        assert_eq!(
            (bf16.weight, bf16.activation, bf16.kv_cache),
            (Dtype::Bfloat16, Dtype::Bfloat16, Dtype::Bfloat16)
        );
        // An FP8 checkpoint runs W8A8 with a 16-bit KV cache unless --kv-cache-dtype fp8.
        let fp8 = Dtypes::resolve(Dtype::Auto, Dtype::Auto, Dtype::Auto, 1);
        assert_eq!(
            (fp8.weight, fp8.activation, fp8.kv_cache),
            (Dtype::Fp8, Dtype::Fp8, Dtype::Bfloat16)
        );
        let fp8_kv = Dtypes::resolve(Dtype::Fp8, Dtype::Auto, Dtype::Fp8, 2);
        assert_eq!(fp8_kv.kv_cache, Dtype::Fp8);
        // Weight-only integer quantisation computes in 16-bit.
        let awq = Dtypes::resolve(Dtype::Int4, Dtype::Auto, Dtype::Auto, 2);
        assert_eq!((awq.activation, awq.weight.bytes()), (Dtype::Bfloat16, 0.5));
    }
}
