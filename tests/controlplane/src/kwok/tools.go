//go:build tools

// tools.go -- pins kwok, the fake kubelet for the GPU nodes and pods' lifecycle.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
