"""Build agents: check out a commit, run the build, park the artifact, publish after an approve.

Two capabilities share this package: `ios_build` (handler `workloads.builds.ios:handle`,
TestFlight) and `roblox_build` (handler `workloads.builds.roblox:handle`, Open Cloud).
"""
