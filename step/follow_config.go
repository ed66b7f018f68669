package step

import "time"

// How a follower reads the stream's tail (see [Log.Follow]).
const (
	// FollowInactive is how long the server keeps the consumer of a
	// follower that stopped reading without deleting it (a process that
	// was killed): after it, the stream holds none of that follower's
	// consumers.
	FollowInactive = 30 * time.Second
	// followHeartbeat is how often the server tells an idle follower that
	// its consumer is alive; two missed heartbeats make the client
	// recreate the consumer from where it stopped.
	followHeartbeat = 2 * time.Second
	// followPullExpiry is how long one pull request waits for messages:
	// an idle follower sends one pull request per expiry.
	followPullExpiry = 20 * time.Second
	// followBatch is the most messages one pull request asks for.
	followBatch = 4096
	// followDropTimeout bounds the deletion of a stopped follower's
	// consumer.
	followDropTimeout = 5 * time.Second
)
