"""VM operations on a homelab (vSphere or libvirt), each one approved before it happens."""
