//! The `[array]` keys a layout alone reads (`copies` for RAID-1, `parity_rotation` for
//! RAID-5): declared by the layout's file in its registry entry ([`super::LayoutEntry::own_keys`]),
//! and from there checked when a configuration loads, filled with their defaults, written
//! back when it is saved, described in the configuration's schema, and handed to the
//! layout's constructor in [`super::LayoutParams`]. A new layout with keys of its own
//! touches nothing outside its file and its entry.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;

use crate::error::{in_plain_words, Error, Result};

/// One `[array]` key of a layout's own.
#[derive(Debug, Clone, Copy)]
pub struct OwnKey {
    /// The key's name in `[array]` (`copies`).
    pub name: &'static str,
    /// What it means, with its unit: one sentence for the configuration reference.
    pub doc: &'static str,
    /// Its value when the configuration leaves it out.
    pub default: fn() -> toml::Value,
    /// Whether a value has the key's type (and range): the reason if not. Made by
    /// [`OwnKey::check_as`].
    pub check: fn(&toml::Value) -> std::result::Result<(), String>,
    /// The JSON Schema of its value. Made by [`OwnKey::schema_of`].
    pub schema: fn(&mut SchemaGenerator) -> Schema,
}

impl OwnKey {
    /// A [`OwnKey::check`] that reads the value as a `T`.
    pub fn check_as<T: DeserializeOwned>(value: &toml::Value) -> std::result::Result<(), String> {
        value.clone().try_into::<T>().map(|_| ()).map_err(|e| in_plain_words(e.to_string().trim_end()))
    }

    /// A [`OwnKey::schema`] of a `T`.
    pub fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<T>()
    }
}

/// Read own key `name` of `values` as a `T`. `key` is the config path of the array table;
/// a missing key or a value of the wrong type is an error naming `key.name`.
pub fn read<T: DeserializeOwned>(values: &toml::Table, name: &str, key: &str) -> Result<T> {
    let value = values
        .get(name)
        .ok_or_else(|| Error::config(format!("{key}.{name}"), "missing: the layout needs it"))?;
    value
        .clone()
        .try_into::<T>()
        .map_err(|e| Error::config(format!("{key}.{name}"), in_plain_words(e.to_string().trim_end())))
}

/// Check the own keys `given` for an array of layout `layout` (`key` is the array table's
/// config path), and fill in the defaults of those left out. A key of another layout's own,
/// or of no layout, is refused by name (the error lists `common`, the keys every array reads,
/// and the layout's own).
pub fn check_and_fill(layout: &str, given: &mut toml::Table, key: &str, common: &[&str]) -> Result<()> {
    let Some(entry) = super::entry_named(layout) else {
        // An unknown layout is refused by name when the array is built.
        return Ok(());
    };
    if let Some(name) = given.keys().find(|name| !entry.own_keys.iter().any(|k| k.name == name.as_str())) {
        let owner = super::entries().into_iter().find(|e| e.own_keys.iter().any(|k| k.name == name.as_str()));
        return Err(match owner {
            Some(owner) => Error::config(
                format!("{key}.{name}"),
                format!(
                    "only the {} layout reads it, and this array is {layout}: remove it (or set \
                     `{key}.layout = \"{}\"`)",
                    owner.name, owner.name
                ),
            ),
            None => {
                let known: Vec<String> = common
                    .iter()
                    .copied()
                    .chain(entry.own_keys.iter().map(|k| k.name))
                    .map(|k| format!("`{k}`"))
                    .collect();
                Error::config(
                    format!("{key}.{name}"),
                    format!("unknown field `{name}`, expected one of {} (an array of layout {layout})", known.join(", ")),
                )
            }
        });
    }
    for own in entry.own_keys {
        match given.get(own.name) {
            Some(value) => (own.check)(value).map_err(|why| Error::config(format!("{key}.{}", own.name), why))?,
            None => {
                given.insert(own.name.to_string(), (own.default)());
            }
        }
    }
    Ok(())
}

/// The schema of every layout's own keys, as the properties of one object (flattened into
/// the `[array]` table's schema): each described as its layout's alone.
pub fn schema(generator: &mut SchemaGenerator) -> Schema {
    let mut properties = serde_json::Map::new();
    for entry in super::entries() {
        for own in entry.own_keys {
            let mut schema = (own.schema)(generator);
            let description = format!("Layout `{}` only: {} Refused for another layout.", entry.name, own.doc);
            let object = schema.ensure_object();
            object.insert("description".into(), description.into());
            let default = serde_json::to_value((own.default)()).expect("a TOML value is JSON");
            object.insert("default".into(), default);
            properties.insert(own.name.into(), schema.into());
        }
    }
    let mut object = serde_json::Map::new();
    object.insert("type".into(), "object".into());
    object.insert("properties".into(), properties.into());
    Schema::from(object)
}

/// Describe the `[array]` table's `layout` key (in its schema) with the registry's layouts.
pub fn describe_layouts(schema: &mut Schema) {
    let layouts: Vec<String> = super::entries().iter().map(|e| format!("`{}` ({})", e.name, e.doc)).collect();
    let description = format!("Layout: {}.", layouts.join(", "));
    if let Some(layout) = schema.get_mut("properties").and_then(|p| p.get_mut("layout")).and_then(|l| l.as_object_mut()) {
        layout.insert("description".into(), description.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMON: &[&str] = &["layout", "drives"];

    #[test]
    fn every_own_key_default_passes_its_own_check_and_no_two_layouts_share_a_key() {
        let mut seen = std::collections::HashMap::new();
        for entry in super::super::entries() {
            for own in entry.own_keys {
                (own.check)(&(own.default)()).unwrap_or_else(|e| panic!("{}.{}: {e}", entry.name, own.name));
                if let Some(other) = seen.insert(own.name, entry.name) {
                    panic!("{} is both {other}'s and {}'s", own.name, entry.name);
                }
            }
        }
        assert!(!seen.is_empty());
    }

    #[test]
    fn checking_fills_defaults_and_names_a_bad_value() {
        let mut given = toml::Table::new();
        check_and_fill("raid1", &mut given, "array", COMMON).unwrap();
        assert_eq!(given.get("copies"), Some(&toml::Value::Integer(2)));
        let mut given = toml::Table::new();
        given.insert("copies".into(), toml::Value::String("two".into()));
        let err = check_and_fill("raid1", &mut given, "array", COMMON).unwrap_err().to_string();
        assert!(err.starts_with("array.copies:"), "{err}");
        let mut given = toml::Table::new();
        given.insert("parity_rotation".into(), toml::Value::String("sideways".into()));
        let err = check_and_fill("raid5", &mut given, "array", COMMON).unwrap_err().to_string();
        assert!(err.starts_with("array.parity_rotation:") && err.contains("left-symmetric"), "{err}");
        let mut given = toml::Table::new();
        given.insert("chunk".into(), toml::Value::Integer(1));
        let err = check_and_fill("raid5", &mut given, "array", COMMON).unwrap_err().to_string();
        assert!(err.starts_with("array.chunk: unknown field `chunk`") && err.contains("`parity_rotation`"), "{err}");
    }
}
