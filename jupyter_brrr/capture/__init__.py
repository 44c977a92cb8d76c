"""Running code under the profiler: timing with CUDA events, clocks, module and line attribution, memory, and recording or launching multi-rank jobs."""
