package framework

// ClaimCreated makes discardClaims (NewHandle's default ClaimRecorder) a
// ClaimRecorder. The method was declared in dynamicresources.go; the
// plugin moved to plugins/dynamicresources, and a method stays in its
// type's package.
func (discardClaims) ClaimCreated(bool) {}
