# x/variants.sh: build p2pbench variants of the bidir engine into /tmp/var-NAME/build
source scripts/lib/steps.sh  # run from the checkout's root: each failed step named, exit 1 at the end
f=src/methods/host_link/host_bidir_engine.cpp
mk() {  # NAME SED-EXPR
  rm -rf /tmp/var-$1 && mkdir -p /tmp/var-$1 && tar -cf - --exclude=./x --exclude=./build --exclude=./.git . | tar -xf - -C /tmp/var-$1
  (cd /tmp/var-$1 && sed -i "$2" $f && grep -c "VARIANT" $f &&
   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DP2PBENCH_BUILD_TESTS=OFF >/dev/null &&
   cmake --build build -j 16 --target p2pbench > build.log 2>&1)
  record_step "variant $1" $? || tail -20 /tmp/var-$1/build.log
}
# A: the beside copies as stream copies, not a graph
mk streambeside 's|  cuda_check(cudaGraphLaunch(beside_graph_.get(), s), std::string("launching the beside ") + beside_name() + " copies");|  for (uint64_t i = 0; i < beside_copies(); ++i) cuda_check(cudaMemcpyAsync(beside_dst(), beside_src(), beside_bytes_, cudaMemcpyDefault, s), "VARIANT");|'
# B: the timed copies issued by the host after the gate (no graph)
mk hostdriven 's|  void set_iterations(uint64_t n) override { iterations_ = n; }|  void set_iterations(uint64_t n) override { iterations_ = n; }\n  bool capturable() const override { return false; }  // VARIANT|'
finish_steps variants
