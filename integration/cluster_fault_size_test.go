//go:build !soak

package integration

// faultTrials is how many times TestStreamLeaderNodeDownOnACluster takes the
// stream leader's node down in CI (the full 10 run with -tags soak): one,
// beside TestStreamLeaderSIGKILLOnAProcessCluster's one, keeps the cluster
// fault tests within about 30 s under -race on two cores.
const faultTrials = 1

// hostKillTrials is how many times TestEngineHostSIGKILLOnACluster kills a
// host in CI (20 with -tags soak).
const hostKillTrials = 2

// processKillTrials is how many times TestStreamLeaderSIGKILLOnAProcessCluster
// kills the stream leader's nats-server in CI (10 with -tags soak).
const processKillTrials = 1
