"""What ties the stages together: registration of dialects, passes and
pipelines, loading sources, the compile cache, warm start, `CompiledGraph`."""
