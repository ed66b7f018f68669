//go:build !soak

package integration

// faultTrials is how many times TestStreamLeaderNodeDownOnACluster takes the
// stream leader's node down in CI (the full 10 run with -tags soak).
const faultTrials = 2

// hostKillTrials is how many times TestEngineHostSIGKILLOnACluster kills a
// host in CI (20 with -tags soak).
const hostKillTrials = 2

// processKillTrials is how many times TestStreamLeaderSIGKILLOnAProcessCluster
// kills the stream leader's nats-server in CI (10 with -tags soak).
const processKillTrials = 1
