//! The ReplicationControllers and pods the update reads, edits and writes whole: of
//! each object, only the fields rolling-update reads or changes are declared, with
//! k8s-openapi's names and types; every other member, at every level, is kept as the
//! server sent it (`rest`) and sent back unchanged.
//!
//! Why not k8s-openapi's models: their decoders and encoders decode all of a pod
//! spec (volumes, containers, probes…), about half a megabyte of the binary for the
//! few fields read here (docs/binary-size.md). And they drop what they do not know:
//! k8s-openapi's v1_33 models lose the fields a 1.34+ server added, so a PUT of an RC
//! (`original-replicas`' fallback) lost its template's newer fields, and a PUT of a
//! pod (the relabelling of the old RC's pods) sent a spec without the server's newer
//! defaulted fields, which the server refuses (a pod's spec may not change). Here an
//! object read, edited and written keeps every member it came with.
//!
//! Encoding: the declared members and `rest` are written merged in key order, as
//! k8s-openapi wrote its fields (alphabetically), after `apiVersion` and `kind` for
//! the two resources; an absent optional member is left out, a required one is
//! written at its default (`status.replicas: 0`, `containers: []`), as k8s-openapi
//! did. Decoding fails as k8s-openapi's did on the declared members (serde_json's
//! words) and on an `apiVersion` or `kind` of another type; the members in `rest` are
//! any JSON. Decoded from text only (kube's answers, `resources::typed`): one decoder
//! per model in the binary.

pub use pod::Pod;
pub use replication_controller::{
    Container, ReplicationController, ReplicationControllerCondition,
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{DeserializeOwned, MapAccess};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// A declared member: how it is read, and whether it is left out when written.
pub(crate) trait Member: Sized + Serialize {
    /// Reads the member's value (the key is read).
    fn read<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error>;
    /// Whether the member is absent (not written).
    fn absent(&self) -> bool;
}

/// An optional member: `null` or absent is `None`, which is not written.
impl<T: DeserializeOwned + Serialize> Member for Option<T> {
    fn read<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error> {
        map.next_value()
    }

    fn absent(&self) -> bool {
        self.is_none()
    }
}

/// Required members, as k8s-openapi reads them: `null` or absent is the default;
/// always written.
macro_rules! required {
    ($($ty:ty),*) => {$(
        impl Member for $ty {
            fn read<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Self, A::Error> {
                Ok(map.next_value::<Option<$ty>>()?.unwrap_or_default())
            }

            fn absent(&self) -> bool {
                false
            }
        }
    )*};
}

required!(ObjectMeta, i32, String, Vec<Container>);

/// Writes `rest` merged with the declared members in key order: the members of
/// `rest` before `key`, then `key`'s value unless it is absent.
fn write_before<M: serde::ser::SerializeMap>(
    out: &mut M,
    rest: &mut std::iter::Peekable<serde_json::map::Iter<'_>>,
    key: &str,
    value: &impl Member,
) -> Result<(), M::Error> {
    while let Some((k, v)) = rest.next_if(|(k, _)| k.as_str() < key) {
        out.serialize_entry(k, v)?;
    }
    if !value.absent() {
        out.serialize_entry(key, value)?;
    }
    Ok(())
}

/// Writes what is left of `rest` and ends the object.
fn write_rest<M: serde::ser::SerializeMap>(
    mut out: M,
    rest: std::iter::Peekable<serde_json::map::Iter<'_>>,
) -> Result<M::Ok, M::Error> {
    for (k, v) in rest {
        out.serialize_entry(k, v)?;
    }
    out.end()
}

/// Starts an object of `len` members at most.
fn start<S: Serializer>(serializer: S, len: usize) -> Result<S::SerializeMap, S::Error> {
    serializer.serialize_map(Some(len))
}

/// Reads the value of a member not declared into `rest`.
fn keep<'de, A: MapAccess<'de>>(
    map: &mut A,
    rest: &mut Map<String, Value>,
    key: String,
) -> Result<(), A::Error> {
    let value: Value = map.next_value()?;
    rest.insert(key, value);
    Ok(())
}

/// Reads `apiVersion` or `kind`, which must be `want` (k8s-openapi's check).
fn expect<'de, A: MapAccess<'de>>(map: &mut A, want: &'static str) -> Result<(), A::Error> {
    let value: String = map.next_value()?;
    if value == want {
        Ok(())
    } else {
        Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Str(&value),
            &want,
        ))
    }
}

/// A model: the struct with its declared members (keys in order) and `rest`, and its
/// codec. With `($api_version, $kind)`, a resource: those two are checked when read,
/// written first, and the k8s-openapi (hence kube) resource traits are implemented.
macro_rules! model {
    (
        $(#[$meta:meta])*
        $name:ident $(($api_version:literal, $kind:literal, $plural:literal))? {
            $($(#[$fmeta:meta])* $key:literal => $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
            /// Every other member, as it came.
            pub rest: serde_json::Map<String, serde_json::Value>,
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut out = $crate::model::start(serializer, 2 + [$($key),*].len() + self.rest.len())?;
                $(
                    serde::ser::SerializeMap::serialize_entry(&mut out, "apiVersion", $api_version)?;
                    serde::ser::SerializeMap::serialize_entry(&mut out, "kind", $kind)?;
                )?
                let mut rest = self.rest.iter().peekable();
                $($crate::model::write_before(&mut out, &mut rest, $key, &self.$field)?;)*
                $crate::model::write_rest(out, rest)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visitor;

                impl<'de> serde::de::Visitor<'de> for Visitor {
                    type Value = $name;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(stringify!($name))
                    }

                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> Result<$name, A::Error> {
                        let mut out = $name::default();
                        while let Some(key) = map.next_key::<String>()? {
                            match key.as_str() {
                                $(
                                    "apiVersion" => $crate::model::expect(&mut map, $api_version)?,
                                    "kind" => $crate::model::expect(&mut map, $kind)?,
                                )?
                                $($key => out.$field = $crate::model::Member::read(&mut map)?,)*
                                _ => $crate::model::keep(&mut map, &mut out.rest, key)?,
                            }
                        }
                        Ok(out)
                    }
                }

                deserializer.deserialize_map(Visitor)
            }
        }

        $(
            impl k8s_openapi::Resource for $name {
                const API_VERSION: &'static str = $api_version;
                const GROUP: &'static str = "";
                const KIND: &'static str = $kind;
                const VERSION: &'static str = $api_version;
                const URL_PATH_SEGMENT: &'static str = $plural;
                type Scope = k8s_openapi::NamespaceResourceScope;
            }

            impl k8s_openapi::Metadata for $name {
                type Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

                fn metadata(&self) -> &Self::Ty {
                    &self.metadata
                }

                fn metadata_mut(&mut self) -> &mut Self::Ty {
                    &mut self.metadata
                }
            }
        )?
    };
}

pub(crate) mod pod;
pub(crate) mod replication_controller;

#[cfg(test)]
mod tests;
