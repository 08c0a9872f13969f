"""Passwords where their formats' grammar puts them (issue 36, third round): one test per class."""

from __future__ import annotations

import pytest

from wayline.redaction import redact_text

VALUES = ("CfTDKSBAzacQzLfH", "s3cr3tP4ss", "p@ss!w0rd#9")


def _hidden(form: str) -> None:
    for value in VALUES:
        text = form.format(v=value)
        out = redact_text(text)
        assert value not in out, (text, out)
        assert "<redacted>" in out, (text, out)


@pytest.mark.parametrize(
    "form",
    [
        "<pwd>{v}</pwd>",
        '<entry key="password">{v}</entry>',
        '<property name="password"><value>{v}</value></property>',
        "<name>db.password</name>\n<value>{v}</value>",
        '<input type="password" name="pw" value="{v}">',
        "<kennwort>{v}</kennwort>",
    ],
)
def test_xml_and_html_password_elements(form: str) -> None:
    """XML elements named by attribute or child, short tags and HTML password fields hide it."""
    _hidden(form)


@pytest.mark.parametrize(
    "form",
    [
        '"pwd": "{v}"',
        '"pass": "{v}"',
        "pass: {v}",
        "user: alice pass: {v}",
        "pw: {v}",
        'pwd := "{v}"',
        "mot_de_passe: {v}",
        "motDePasse: {v}",
        "wachtwoord: {v}",
        '"contraseña": "{v}"',
        "пароль: {v}",
        "密码: {v}",
        "pass_word = {v}",
        "password: |\n  {v}\n",
        "password: >-\n  {v}\n",
        "$cfg['Servers'][$i]['password'] = '{v}';",
        'config["db_password"] = "{v}"',
    ],
)
def test_config_keys_in_several_languages_and_forms(form: str) -> None:
    """Short names, other languages' words, block scalars and subscript keys hide the value."""
    _hidden(form)


@pytest.mark.parametrize(
    "form",
    [
        'ds.setPassword("{v}");',
        'builder.withPassword("{v}")',
        '.password("{v}")',
        "client.set_password('{v}')",
        'new PasswordAuthentication("user", "{v}".toCharArray())',
        'new NetworkCredential("user", "{v}", "DOMAIN")',
        'DriverManager.getConnection(url, "sa", "{v}");',
        "mysqli_connect('localhost', 'root', '{v}')",
        "new PDO($dsn, 'root', '{v}');",
        "smtp.login('user@x.com', '{v}')",
        "HTTPBasicAuth('user', '{v}')",
        'keyStore.load(in, "{v}".toCharArray());',
    ],
)
def test_setters_and_credential_apis(form: str) -> None:
    """Setters named for a credential and credential APIs' password argument hide it."""
    _hidden(form)


@pytest.mark.parametrize(
    "form",
    [
        "curl -uadmin:{v} https://x",
        "htpasswd -b -c /etc/htpasswd admin {v}",
        "htpasswd -nb admin {v}",
        "net user alice {v} /add",
        "net use Z: \\\\srv\\s /user:alice {v}",
        "echo {v} | docker login -u u --password-stdin",
        "echo '{v}' | sudo -S apt update",
        "echo 'alice:{v}' | chpasswd",
        "sqlplus scott/{v}@orcl",
        "jdbc:oracle:thin:scott/{v}@h:1521:orcl",
        "ssh-keygen -p -P old -N {v}",
        "unrar x -p{v} a.rar",
        "lftp -u alice,{v} ftp.example.com",
        "snmpwalk -v3 -u u -A {v} h",
        "xfreerdp /u:alice /p:{v} /v:h",
        "nmcli dev wifi connect ssid password {v}",
        "wpa_passphrase myssid {v}",
        "rabbitmqctl add_user alice {v}",
        "mosquitto_pub -u u -P {v} -t t -m m",
        "ENV DB_PASSWORD {v}",
        "username alice password {v}",
        "password\t{v}",
    ],
)
def test_command_lines_and_blank_separated_values(form: str) -> None:
    """Tools whose position says "password", and a value after the word alone, are hidden."""
    _hidden(form)


@pytest.mark.parametrize(
    "text",
    [
        "PWD=/home/alice/project",
        '"pwd": "/var/lib/app"',
        "first_pass: 3 of 10",
        "bypass: Xk9mQ2zz1",
        'keyring.get_password("service", "user")',
        'x: Literal["client_secret_basic", "b"] = "client_secret_basic",',
        'h["Access-Control-Allow-Credentials"] = "true"',
        "model_key = gpt4o2024mini",
        "the password field is required",
        "password: PasswordField",
        'setSecretName("db-secret")',
        "htpasswd -c /etc/htpasswd admin",
    ],
)
def test_grammar_distinctions_keep_benign_text(text: str) -> None:
    """Paths, steps, getters, subscripted type lists, booleans, lookup keys and prose stay."""
    assert redact_text(text) == text


def test_rejected_short_name_value_does_not_hide_the_next_name() -> None:
    """A value rejected as a path is rescanned, so a name inside it is still found."""
    assert redact_text("pw:/tmp:pwd=Abc12345x") == "pw:/tmp:pwd=<redacted>"


def test_hostile_short_names_are_bounded() -> None:
    """Text made of short names only is redacted in one bounded pass and stays unchanged."""
    text = "pw:" * 100_000
    assert redact_text(text) == text
