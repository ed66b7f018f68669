//go:build !soak

package integration

// clRuns is how many runs TestRunsAcrossHostsOnACluster drives in CI.
const clRuns = 100
