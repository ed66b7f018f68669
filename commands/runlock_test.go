package commands

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Holders of one run exclude each other (the race detector watches the
// unguarded counters), runs never wait for each other, and the table is
// empty once everyone has unlocked.
func TestRunLocks(t *testing.T) {
	var l runLocks
	counts := map[string]*int{}
	for i := range 4 {
		counts[fmt.Sprint("run", i)] = new(int)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				run := fmt.Sprint("run", (g+i)%4)
				held := l.lock(run)
				*counts[run]++
				held.unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for _, c := range counts {
		total += *c
	}
	if total != 16*200 {
		t.Errorf("counted %d lockings, want %d", total, 16*200)
	}
	if n := l.held(); n != 0 {
		t.Errorf("%d runs left in the table after every unlock", n)
	}

	// Runs never wait for each other: one goroutine holds 300 runs at once
	// (striped locks would have made two of them share a stripe).
	done := make(chan []*runLock)
	go func() {
		var held []*runLock
		for i := range 300 {
			held = append(held, l.lock(fmt.Sprint("held", i)))
		}
		done <- held
	}()
	select {
	case held := <-done:
		for _, h := range held {
			h.unlock()
		}
	case <-time.After(10 * time.Second):
		t.Fatal("locking one run waited for another")
	}
	if n := l.held(); n != 0 {
		t.Errorf("%d runs left in the table after every unlock", n)
	}
}
