"""Small, real inputs for the performance-model tests: datasheet GPUs, fabrics, models."""

from __future__ import annotations

from designer.catalog.types import Gpu, Provenance
from designer.perf import MoE, ModelArch, NetworkView

_SRC = Provenance(source="NVIDIA A100/H100 datasheets; MAMF from stas00/ml-engineering", as_of="2024")

# A100 SXM4 80GB: 312 TFLOP/s BF16, 2,039 GB/s HBM2e, NVLink3 300 GB/s per direction,
# measured MAMF 271.2 TFLOP/s.
A100 = Gpu(name="a100-80g", description="A100 SXM4 80GB", vendor="nvidia", bf16_flops=312e12,
           fp8_flops=None, hbm_bytes=80 * 2**30, hbm_Bps=2.039e12, scaleup_Bps=300e9,
           scaleup_kind="nvlink3", power_w=400, price_usd=None, matmul_efficiency=271.2 / 312,
           provenance=_SRC)
# H100 SXM5: 989 BF16 / 1,979 FP8 TFLOP/s, 3.35 TB/s, NVLink4 450 GB/s, MAMF 794.5.
H100 = Gpu(name="h100", description="H100 SXM5 80GB", vendor="nvidia", bf16_flops=989e12,
           fp8_flops=1979e12, hbm_bytes=80 * 2**30, hbm_Bps=3.35e12, scaleup_Bps=450e9,
           scaleup_kind="nvlink4", power_w=700, price_usd=None, matmul_efficiency=794.5 / 989,
           provenance=_SRC)

# One 400G NDR port per GPU (DGX H100), InfiniBand latencies from the network facts.
NDR = NetworkView(gpus_per_node=8, inter_Bps_per_gpu=50e9, efficiency=0.94, host_latency_s=1e-6,
                  switch_latency_s=0.15e-6, hops=3, fabric="infiniband")
# One 200G HDR port per GPU (DGX A100, Selene).
HDR = NetworkView(gpus_per_node=8, inter_Bps_per_gpu=25e9, efficiency=0.94, host_latency_s=0.6e-6,
                  switch_latency_s=0.13e-6, hops=5, hops_same_rail=3, fabric="infiniband")

# GPT-3 175B (Brown et al. 2020; Megatron SC21 Table 1): 96 layers, 12288 wide, 96 heads.
GPT3 = ModelArch("gpt3-175b", 96, 12288, 96, None, None, 51200, 2048, biases=True,
                 learned_positions=True, tied_embeddings=True)
# Llama 3 8B model card: 32 layers, 4096 wide, 32 heads, 8 KV heads, SwiGLU 14336, 128256 vocab.
LLAMA3_8B = ModelArch("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, gated_mlp=True)
# Mixtral 8x7B (Jiang et al. 2024): Mistral 7B layers with 8 experts, top-2.
MIXTRAL = ModelArch("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 4096, gated_mlp=True,
                    moe=MoE(experts=8, top_k=2))
# A 1.3B GPT (Megatron's GPT-2 XL-sized config): quick to evaluate in property tests.
GPT_1B = ModelArch("gpt-1.3b", 24, 2048, 16, None, None, 51200, 2048)

# H200 SXM 141GB (catalogs/gpus.yaml): H100 compute, 141 GiB HBM3e at 4.8 TB/s.
H200 = Gpu(name="h200", description="H200 SXM 141GB", vendor="nvidia", bf16_flops=989e12,
           fp8_flops=1979e12, hbm_bytes=141 * 2**30, hbm_Bps=4.8e12, scaleup_Bps=450e9,
           scaleup_kind="nvlink4", power_w=700, price_usd=None, matmul_efficiency=0.8033,
           provenance=_SRC)
# B200 HGX 1,000 W (catalogs/gpus.yaml): 2,250 BF16 / 4,500 FP8 TFLOP/s dense, 180 GiB at
# 8 TB/s, NVLink5 900 GB/s per direction, MAMF 1,745 TFLOP/s (0.7756).
B200 = Gpu(name="b200", description="B200 HGX", vendor="nvidia", bf16_flops=2250e12,
           fp8_flops=4500e12, hbm_bytes=180 * 2**30, hbm_Bps=8e12, scaleup_Bps=900e9,
           scaleup_kind="nvlink5", power_w=1000, price_usd=None, matmul_efficiency=0.7756,
           provenance=_SRC)
# AWS EFA as an 8-GPU instance sees it (catalogs/fabrics.yaml `efa`; p5e and p6-b200 have
# 3,200 Gb/s per node = 50 GB/s per GPU): 0.95 of line rate, 10 us host latency, the provider
# network as one hop with half the injection bandwidth across a bisection.
EFA = NetworkView(gpus_per_node=8, inter_Bps_per_gpu=50e9, efficiency=0.95, host_latency_s=10e-6,
                  switch_latency_s=0.0, hops=1, bisection_Bps_per_gpu=25e9, fabric="efa")
# Llama 3 70B (Meta, The Llama 3 Herd of Models, Table 3).
LLAMA3_70B = ModelArch("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, gated_mlp=True,
                       params=70.6e9)
