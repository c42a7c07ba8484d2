"""`[workloads.vm_ops]`: read from the config file, checked key by key, secrets from env."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskqueue import ConfigError, load_config
from workloads.vm_ops.settings import PASSWORD_ENV, SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[3]
VSPHERE = """\
[workloads.vm_ops]
driver = "vsphere"
vcenter_url = "https://vcenter.lab:8443/sdk"
user = "svc-signoff"
datacenter = "Home"
allow_patterns = ["lab-*"]
allow_folders = ["/homelab/"]
allow_delete = false
"""


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "signoff.toml"
    path.write_text(text, "utf-8")
    return path


def test_vsphere_settings_come_from_the_file_and_the_password_from_env(tmp_path: Path) -> None:
    s = load_settings(_file(tmp_path, VSPHERE), env={PASSWORD_ENV: "pw"})
    assert (s.driver, s.vcenter_url, s.user, s.datacenter) == (
        "vsphere", "https://vcenter.lab:8443/sdk", "svc-signoff", "Home")
    assert s.password == "pw" and s.verify_tls and not s.allow_delete
    assert s.allow_folders == ("homelab",) and s.allow_patterns == ("lab-*",)


def test_vsphere_takes_a_ca_file_and_a_resource_pool(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n", "utf-8")
    text = VSPHERE + f'ca_file = "{ca}"\nresource_pool = "/cluster1/Resources/lab/"\n'
    s = load_settings(_file(tmp_path, text), env={})
    assert (s.ca_file, s.resource_pool) == (str(ca), "cluster1/Resources/lab")
    plain = load_settings(_file(tmp_path, VSPHERE), env={})
    assert (plain.ca_file, plain.resource_pool) == ("", "")


def test_the_config_file_is_found_through_signoff_config(tmp_path: Path) -> None:
    path = _file(tmp_path, '[workloads.vm_ops]\ndriver = "libvirt"\n'
                           'libvirt_uri = "qemu:///system"\nallow_names = ["a"]\n')
    assert load_settings(env={"SIGNOFF_CONFIG": str(path)}).libvirt_uri == "qemu:///system"


@pytest.mark.parametrize(("text", "error"), [
    ('driver = "proxmox"\nallow_names = ["a"]', "driver: must be"),
    ('driver = "libvirt"\nlibvirt_uri = "test:///default"', "give allow_names"),
    ('driver = "libvirt"\nallow_names = ["a"]', "libvirt_uri: required"),
    ('driver = "libvirt"\nlibvirt_uri = "x"\nallow_names = ["a b"]', "allow_names: 'a b'"),
    ('driver = "libvirt"\nlibvirt_uri = "x"\nallow_names = ["a"]\nmax_cpus = 0', "max_cpus"),
    ('driver = "libvirt"\nlibvirt_uri = "x"\nallow_names = ["a"]\ncolour = 1', "unknown key"),
    ('driver = "vsphere"\nvcenter_url = "http://vc/sdk"\nuser = "u"\nallow_names = ["a"]',
     "must start with https://"),
    ('driver = "vsphere"\npassword = "x"', "secrets never go in the file"),
    (VSPHERE.split("\n", 1)[1] + 'ca_file = "certs/ca.pem"', "ca_file: must be the absolute"),
    (VSPHERE.split("\n", 1)[1] + 'ca_file = "/no/such/ca.pem"', "ca_file: must be the absolute"),
    (VSPHERE.split("\n", 1)[1] + 'verify_tls = false\nca_file = "/etc/hostname"',
     "ca_file: is only read with verify_tls = true"),
    (VSPHERE.split("\n", 1)[1] + "resource_pool = 7", "resource_pool: must be"),
])
def test_a_bad_setting_names_its_key(tmp_path: Path, text: str, error: str) -> None:
    with pytest.raises(SettingsError, match=error) as err:
        load_settings(_file(tmp_path, f"[workloads.vm_ops]\n{text}\n"), env={})
    assert str(err.value).startswith(("workloads.vm_ops.", "workloads.vm_ops:"))
    assert isinstance(err.value, ConfigError)


def test_the_example_config_loads_with_vm_ops_external_and_capped(tmp_path: Path) -> None:
    example = ROOT / "signoff.example.toml"
    config = load_config(example, env={})
    cap = config.capability("vm_ops")
    assert cap is not None and cap.mode == "external" and cap.max_running == 1
    settings = load_settings(example, env={PASSWORD_ENV: "pw"})
    assert settings.driver in ("vsphere", "libvirt") and settings.allow_names
