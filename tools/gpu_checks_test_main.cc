// A binary linked against a shared library (gpu_checks_test_lib), which
// gpu_checks_test packs without that library: the machine phase must name it.
int GpuChecksTestLibValue();

int main() { return GpuChecksTestLibValue() == 7 ? 0 : 1; }
