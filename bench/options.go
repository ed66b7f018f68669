package bench

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/stepgate/stepgate/step"
)

// Workloads lists the workload names in the order `engine bench all` runs them.
var workloadNames = []string{"raw", "w1", "w1fx", "w2", "w3", "w4", "w5", "w6", "c2", "c3", "w2x", "w7", "w8", "start"}

// Workloads returns the names of every workload.
func Workloads() []string { return append([]string(nil), workloadNames...) }

// Options select and size a workload run.
type Options struct {
	// Workload is one of Workloads().
	Workload string
	// Sync is step.SyncInterval (default) or step.SyncAlways.
	Sync string
	// Quick runs a reduced size, for CI.
	Quick bool
	// Dir is where temporary data directories are made; default os.TempDir().
	Dir string
	// Log receives progress; default discards.
	Log *slog.Logger
	// Stderr receives the human summary; nil for none.
	Stderr io.Writer
	// Binary is the engine binary the workloads run as separate processes
	// (w3, w4, c3: its hidden bench verb; w6: engine serve); default this
	// process's own executable.
	Binary string
}

func (o Options) binary() (string, error) {
	if o.Binary != "" {
		return o.Binary, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("bench: the engine binary: %w", err)
	}
	return self, nil
}

// Validate reports options that cannot run.
func (o Options) Validate() error {
	switch o.Sync {
	case "", step.SyncInterval, step.SyncAlways:
	default:
		return fmt.Errorf("bench: sync %q: want interval or always", o.Sync)
	}
	for _, w := range workloadNames {
		if w == o.Workload {
			return nil
		}
	}
	return fmt.Errorf("bench: unknown workload %q (have %v)", o.Workload, workloadNames)
}

func (o Options) sync() string {
	if o.Sync == "" {
		return step.SyncInterval
	}
	return o.Sync
}

// sizes of the workloads.
type sizes struct {
	rawMsgs int
	w1Steps int
	w2Runs  int
	w2Steps int
	rounds  int // alternating baseline/engine rounds; medians are reported
	// clusterRounds are c2's rounds: each makes two R3 streams on the
	// cluster, which costs more than a fresh embedded server.
	clusterRounds int
	// rebuildEvents is how many events w5's stream holds.
	rebuildEvents int
}

func (o Options) sizes() sizes {
	if o.Quick {
		return sizes{rawMsgs: 2000, w1Steps: 200, w2Runs: 20, w2Steps: 10, rounds: 1, clusterRounds: 1, rebuildEvents: 20000}
	}
	// Rounds are short (w2's engine window is 40 ms), so a collection or a
	// neighbour on the machine moves any one of them; 21 keep the medians
	// steady and cost a few seconds.
	return sizes{rawMsgs: 10000, w1Steps: 1000, w2Runs: 20, w2Steps: 100, rounds: 21, clusterRounds: 11, rebuildEvents: 1000000}
}
