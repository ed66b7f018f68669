package projection

import "testing"

// Under load the tail often delivers this host's own commit before the host
// folds it: the delivery counts as brought, then as late. A window of such
// deliveries brought the host nothing, and sets the tail aside whichever
// kind of delivery closes it.
func TestTailWindowOfLateOwnCommitsSetsTheTailAside(t *testing.T) {
	for _, closer := range []string{"skipped", "brought"} {
		var w tailCount
		for range tailWindow - 1 {
			if w.brought() {
				t.Fatalf("closed by %s: the window was judged before it was full", closer)
			}
			w.late()
		}
		var pause bool
		if closer == "skipped" {
			pause = w.skipped()
		} else {
			pause = w.brought()
		}
		if !pause {
			t.Errorf("closed by %s: a window of the host's own commits kept the tail on", closer)
		}
	}
}

// A window in which the tail brought other hosts' commits keeps it on.
func TestTailWindowOfOtherHostsCommitsKeepsTheTail(t *testing.T) {
	var w tailCount
	for i := range tailWindow {
		var pause bool
		if i%4 == 0 {
			pause = w.skipped()
		} else {
			pause = w.brought()
		}
		if pause {
			t.Fatalf("delivery %d: a window where 3 in 4 deliveries were new set the tail aside", i)
		}
	}
}
