// Package deploy holds what runs wasmsched in a cluster: the Kubernetes
// manifests (applied together with `kubectl apply -k deploy/`), the
// configuration they mount (config.yaml, carried by configmap.yaml) and
// README.md, which says how to build the image and use them.
//
// Its Go side only embeds the YAML files, for tests that apply them to a
// real API server; deploy_test.go checks that every manifest decodes
// strictly into its typed object, that configmap.yaml carries config.yaml
// and that it loads, and that the RBAC rules grant what the scheduler needs
// and no more.
package deploy

import (
	"embed"
	"io/fs"
)

//go:embed *.yaml
var files embed.FS

// Files are the YAML files of this folder: kustomization.yaml, the
// manifests it lists and config.yaml.
func Files() fs.FS { return files }
