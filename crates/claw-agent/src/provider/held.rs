//! [`Held`]: a message of a request, borrowed from the history or owned, in one pointer.
//!
//! `Cow<'a, T>` is as large as `T` (its owned side is inline), so a request of a long
//! session, a list of `Cow`s of messages of ~180 bytes, held ~0.9 MB per 5,000 messages
//! while it was sent although nearly all of them are borrowed. The owned side is boxed
//! here: every element is a pointer and a tag.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::Deref;

/// A `T` that is either borrowed for `'a` or owned (boxed); read through `Deref`,
/// changed through [`Held::to_mut`], which copies a borrowed one first.
pub enum Held<'a, T> {
    /// Borrowed from where it is kept (the history).
    Borrowed(&'a T),
    /// Owned: made or changed for this request.
    Owned(Box<T>),
}

impl<T: Clone> Held<'_, T> {
    /// The value to change, copied first when it is borrowed.
    pub fn to_mut(&mut self) -> &mut T {
        if let Held::Borrowed(value) = *self {
            *self = Held::Owned(Box::new(value.clone()));
        }
        match self {
            Held::Owned(value) => value,
            Held::Borrowed(_) => unreachable!("a borrowed value was just replaced by its copy"),
        }
    }

    /// The value, copied when it is borrowed.
    pub fn into_owned(self) -> T {
        match self {
            Held::Borrowed(value) => value.clone(),
            Held::Owned(value) => *value,
        }
    }
}

impl<T> Held<'_, T> {
    /// Whether it is borrowed (nothing was copied).
    pub fn is_borrowed(&self) -> bool {
        matches!(self, Held::Borrowed(_))
    }
}

impl<T> Deref for Held<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            Held::Borrowed(value) => value,
            Held::Owned(value) => value,
        }
    }
}

impl<T> AsRef<T> for Held<'_, T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T: Clone> Clone for Held<'_, T> {
    fn clone(&self) -> Self {
        match self {
            Held::Borrowed(value) => Held::Borrowed(value),
            Held::Owned(value) => Held::Owned(value.clone()),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Held<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        T::fmt(self, f)
    }
}

impl<T: PartialEq> PartialEq for Held<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        T::eq(self, other)
    }
}

impl<T: Serialize> Serialize for Held<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        T::serialize(self, serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Held<'_, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(|value| Held::Owned(Box::new(value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_value_is_copied_only_when_changed() {
        let kept = String::from("history");
        let mut held = Held::Borrowed(&kept);
        assert!(held.is_borrowed());
        assert_eq!(held.len(), 7);
        held.to_mut().push_str(" changed");
        assert!(!held.is_borrowed());
        assert_eq!(&*held, "history changed");
        assert_eq!(kept, "history");
    }

    #[test]
    fn a_list_of_held_messages_costs_a_pointer_each() {
        // The reason the type exists: two words per element, whatever `T` weighs.
        assert_eq!(
            std::mem::size_of::<Held<'_, [u8; 200]>>(),
            2 * std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn it_serializes_as_the_value_and_reads_back_owned() {
        let kept = vec![1, 2, 3];
        let json = serde_json::to_string(&Held::Borrowed(&kept)).unwrap();
        assert_eq!(json, "[1,2,3]");
        let back: Held<'_, Vec<i32>> = serde_json::from_str(&json).unwrap();
        assert!(!back.is_borrowed());
        assert_eq!(back, Held::Borrowed(&kept));
        assert_eq!(back.into_owned(), kept);
    }
}
