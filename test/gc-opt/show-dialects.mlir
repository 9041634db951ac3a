// RUN: gc-opt --show-dialects | filecheck %s
// RUN: gc-opt --show-dialects --load-plugin=%plugins/toy_plugin.py | filecheck %s --check-prefix=PLUGIN

// Upstream xDSL dialects and graphcompiler's own, sorted.
// CHECK: Available Dialects: {{.*}}arith, {{.*}}builtin, {{.*}}cf, {{.*}}func, {{.*}}graph, {{.*}}llvm, {{.*}}math, {{.*}}memref, {{.*}}scf, {{.*}}vector
// CHECK-NOT: toy
// PLUGIN: Available Dialects: {{.*}}, toy, {{.*}}
