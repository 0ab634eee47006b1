package frameworktest

import "github.com/wasmsched/wasmsched/host/framework"

// MustProfile is framework.NewProfile of entries, panicking on an error
// (the plugins' tests build single-plugin profiles with it).
func MustProfile(entries ...framework.Entry) *framework.Profile {
	p, err := framework.NewProfile(entries...)
	if err != nil {
		panic(err)
	}
	return p
}
