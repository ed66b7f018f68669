//go:build clusterfault && !soak

package integration

// faultTrials is how many times TestStreamLeaderNodeDownOnACluster takes the
// stream leader's node down at the reduced size.
const faultTrials = 3
