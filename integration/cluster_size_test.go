//go:build !soak

package integration

// clRuns is how many runs TestRunsAcrossHostsOnACluster drives in CI: the
// cluster's three nodes run in the test process, under -race on two cores;
// the full 100 run with -tags soak.
const clRuns = 40
