// RUN: gc-opt --show-dialects | filecheck %s
// RUN: gc-opt --show-dialects --load-plugin=%plugins/toy_plugin.py | filecheck %s --check-prefix=PLUGIN

// CHECK: Available Dialects: {{.*}}arith, {{.*}}builtin, {{.*}}cf, {{.*}}func, {{.*}}llvm, {{.*}}math, {{.*}}memref, {{.*}}scf, {{.*}}vector
// CHECK-NOT: toy
// PLUGIN: Available Dialects: {{.*}}, toy, {{.*}}
