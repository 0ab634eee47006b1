package interpodaffinity

// What the external tests (interpodaffinity_profile_test.go, which run the
// in-tree registry's default profile) need of the package's.

var (
	Pod                        = ipaPod
	Term                       = ipaTerm
	In                         = ipaIn
	Node                       = ipaNode
	Snapshot                   = ipaSnapshot
	StatusPodAntiAffinity      = statusPodAntiAffinity
	StatusExistingAntiAffinity = statusExistingAntiAffinity
)
