//go:build soak

package integration

// clRuns is how many runs TestRunsAcrossHostsOnACluster drives in a soak run.
const clRuns = 100
