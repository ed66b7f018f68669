package events

// interned maps the strings a stored commit holds most often — its kind,
// its events' types, a verdict, a rule's effect and source, a part's type,
// the wildcard — to constants, so that decoding one allocates nothing
// (decoder.sym). It is never written to.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"*", "text", "media",
		"allow", "deny", "ask", "default", "user", "project", "project_narrowing", "saved", "run", "protected",
		VerdictAllow, VerdictBlock, VerdictConfirm, VerdictReject,
		string(KindStart), string(KindCatalog), string(KindDecide), string(KindSettle), string(KindStep),
		string(KindResolve), string(KindEnd), string(KindGrant), string(KindRecover), string(KindSweep), string(KindRegistry), string(KindTurn),
		TypeRunStarted, TypeCatalogAdvertised, TypeToolCallRequested, TypePermissionDecided, TypeToolCallStarted,
		TypeToolResultRecorded, TypeStepFinalized, TypeRunEnded, TypeTicketIssued, TypeStepAwaiting, TypeTicketResolved,
		TypeApprovalSaved, TypeGrantRevoked, TypeOutputFileStored, TypeOutputFileSwept, TypeStateCommand,
		TypeToolRegistered, TypeScopeClosed, TypeStepCopied, TypeModelTurnRecorded,
	} {
		m[s] = s
	}
	return m
}()

// sym reads a string that is most often one of the interned constants,
// as that constant when it is one.
func (d *decoder) sym(dst *string) {
	if d.bad {
		return
	}
	if b, ok := d.p.Plain(); ok {
		if s, ok := interned[string(b)]; ok {
			*dst = s
		} else {
			*dst = d.share(b)
		}
		return
	}
	d.str(dst)
}
