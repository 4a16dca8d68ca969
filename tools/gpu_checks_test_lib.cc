// A shared library that gpu_checks_test's binary needs and its packed copy
// lacks.
int GpuChecksTestLibValue() { return 7; }
