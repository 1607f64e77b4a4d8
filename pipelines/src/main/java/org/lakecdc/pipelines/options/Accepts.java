package org.lakecdc.pipelines.options;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What an option's getter accepts, in the words of the error message a wrong value gets: {@code
 * --name must be <value>, not '<given>'}. {@code CommandLine} uses it when Beam cannot convert the
 * text to the option's type (for {@code --maxCommitsPerBatch=ten}); the jobs' range checks say the
 * same words for a value of the right type out of range. An option without it is described by its
 * type (true or false, an integer, a number).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Accepts {
  /** The accepted values, e.g. {@code "0 or a positive integer"}. */
  String value();
}
