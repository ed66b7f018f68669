//go:build soak

package integration

// clRuns is how many runs TestRunsAcrossHostsOnACluster drives in a soak run.
const clRuns = 100

// faultTrials is how many times TestStreamLeaderNodeDownOnACluster takes the
// stream leader's node down in a soak run.
const faultTrials = 10

// hostKillTrials is how many times TestEngineHostSIGKILLOnACluster kills a
// host in a soak run.
const hostKillTrials = 20

// processKillTrials is how many times TestStreamLeaderSIGKILLOnAProcessCluster
// kills the stream leader's nats-server in a soak run.
const processKillTrials = 10

// processPauseTrials is how many times TestStreamLeaderSIGSTOPOnAProcessCluster
// pauses the stream leader's nats-server in a soak run.
const processPauseTrials = 3
