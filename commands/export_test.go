package commands

import "context"

// TakeOver claims gone's lease at revision rev for h and, when the claim is
// stored, settles what gone left in doubt: the takeover h's watch starts on
// its own once gone's lease expired, called directly (tests race two hosts
// on one expired lease without waiting for it).
func (h *Host) TakeOver(ctx context.Context, gone string, rev uint64) (bool, error) {
	return newTakeovers(h.Engine, h.lease).takeOver(ctx, gone, rev)
}
