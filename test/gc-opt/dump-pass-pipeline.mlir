// --dump-pass-pipeline prints the resolved pipeline (options in full, named
// pipelines expanded) on stderr.
// RUN: gc-opt %s --pass-pipeline='builtin.module(cse,func.func(canonicalize,cse),toy-scale-constants{factor=5})' --load-plugin=%plugins/toy_plugin.py --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s
// CHECK:      Pass Manager with 4 passes:
// CHECK-NEXT: builtin.module(cse,func.func(canonicalize{{.*}},cse),toy-scale-constants{factor=5})

// RUN: gc-opt %s -p 'toy-pipeline' --load-plugin=%plugins/toy_plugin.py --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s --check-prefix=NAMED
// NAMED:      Pass Manager with 2 passes:
// NAMED-NEXT: builtin.module(toy-scale-constants{factor=3},func.func(cse))

func.func @f() {
  func.return
}
